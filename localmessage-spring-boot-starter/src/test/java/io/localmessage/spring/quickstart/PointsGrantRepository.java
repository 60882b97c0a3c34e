package io.localmessage.spring.quickstart;

import org.springframework.data.jpa.repository.JpaRepository;

public interface PointsGrantRepository extends JpaRepository<PointsGrant, String> {}
